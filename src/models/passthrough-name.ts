/**
 * What the model part of a passthrough id (`<family>/<model>`) may hold: it travels in headers
 * (provider_b's User-Agent), argv and URLs, so 1 to 128 printable ASCII characters, no space.
 */
export const PASSTHROUGH_NAME = /^[\x21-\x7e]{1,128}$/;

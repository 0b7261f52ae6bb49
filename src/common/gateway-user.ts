/** The user the gateway runs as, in words a fix about a file's owner or mode names (its uid where known). */
export function gatewayUser(): string {
  const uid = process.getuid?.();
  return uid === undefined ? "the gateway's user" : `the gateway's user (uid ${uid})`;
}

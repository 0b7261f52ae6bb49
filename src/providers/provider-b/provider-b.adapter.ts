import { Injectable } from '@nestjs/common';
import { GatewayError } from '../../common/errors/gateway.error';
import type { CallContext, ChatEvent, ChatRequest, ProviderAdapter } from '../provider-adapter';

/** Placeholder until the provider_b adapter lands: fails every turn with upstream_error. */
@Injectable()
export class ProviderBAdapter implements ProviderAdapter {
  readonly id = 'provider_b' as const;

  stream(_request: ChatRequest, _context: CallContext): Promise<AsyncIterable<ChatEvent>> {
    return Promise.reject(new GatewayError('upstream', { detail: 'provider_b adapter not built yet' }));
  }

  complete(request: ChatRequest, context: CallContext): Promise<AsyncIterable<ChatEvent>> {
    return this.stream(request, context);
  }
}

import { Injectable } from '@nestjs/common';
import { GatewayError } from '../../common/errors/gateway.error';
import type { CallContext, ChatEvent, ChatRequest, ProviderAdapter } from '../provider-adapter';

/** Placeholder until the provider_a adapter lands: fails every turn with upstream_error. */
@Injectable()
export class ProviderAAdapter implements ProviderAdapter {
  readonly id = 'provider_a' as const;

  stream(_request: ChatRequest, _context: CallContext): Promise<AsyncIterable<ChatEvent>> {
    return Promise.reject(new GatewayError('upstream', { detail: 'provider_a adapter not built yet' }));
  }

  complete(request: ChatRequest, context: CallContext): Promise<AsyncIterable<ChatEvent>> {
    return this.stream(request, context);
  }
}

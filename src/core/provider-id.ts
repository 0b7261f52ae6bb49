/**
 * The upstream families (docs/design/decisions.md §1), by their contract names. The one list of provider ids:
 * settings parsing, the agent queues, metric labels, the adapter table and structured inference
 * all read it, so adding a family starts here.
 */
export const PROVIDER_IDS = ['provider_a', 'provider_b', 'provider_c'] as const;

export type ProviderId = (typeof PROVIDER_IDS)[number];

export function isProviderId(value: unknown): value is ProviderId {
  return (PROVIDER_IDS as readonly unknown[]).includes(value);
}

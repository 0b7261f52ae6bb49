/** Multi-provider token: the adapters of the enabled families (built at boot from config). */
export const PROVIDER_ADAPTERS = Symbol('PROVIDER_ADAPTERS');

/**
 * Process-local memory of Gemini thought signatures by tool-call id (docs/upstream/provider-b.md §8), so a
 * replayed call still carries its signature when the client dropped `extra_content`. Entries
 * live 30 minutes; beyond 10 000 entries the oldest goes first. A Map keeps insertion order,
 * which is all the eviction needs, so no LRU library is pulled in for it.
 */
export class ThoughtSignatureStore {
  private readonly entries = new Map<string, { readonly signature: string; readonly expiresAt: number }>();

  constructor(
    private readonly ttlMs = 30 * 60_000,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  remember(callId: string, signature: string): void {
    if (callId === '' || signature === '') return;
    // Re-inserting moves the id to the young end of the eviction order.
    this.entries.delete(callId);
    this.entries.set(callId, { signature, expiresAt: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  lookup(callId: string): string | undefined {
    const entry = this.entries.get(callId);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(callId);
      return undefined;
    }
    return entry.signature;
  }

  get size(): number {
    return this.entries.size;
  }
}

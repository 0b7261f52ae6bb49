/**
 * lru-cache options that hold at most `entries` entries without reserving room for them when the
 * cache is made. Given `max`, lru-cache allocates its key, value and link arrays for `max` entries
 * up front: for the gateway's 10,000-chat caches that is memory held from startup by a process that
 * may never see that many chats. Counting every entry as size 1 against `maxSize` bounds the count
 * alike, and the arrays grow only as entries arrive.
 */
export function growingLru(entries: number): { maxSize: number; sizeCalculation: () => number } {
  return { maxSize: entries, sizeCalculation: oneEntry };
}

function oneEntry(): number {
  return 1;
}

import { LRUCache } from 'lru-cache';
import { growingLru } from './growing-lru';

describe('growingLru', () => {
  it('holds at most its count, forgetting the least recently used first', () => {
    const forgotten: string[] = [];
    const cache = new LRUCache<string, number>({
      ...growingLru(2),
      dispose: (_value, key) => forgotten.push(key),
    });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.get('a');
    cache.set('c', 3);
    expect([...cache.keys()].sort()).toEqual(['a', 'c']);
    expect(forgotten).toEqual(['b']);
  });
});

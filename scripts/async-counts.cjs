// Preloaded into the gateway by `scripts/heap-per-stream.ts ... counts` (node --require): counts
// the async resources the process creates, by type (PROMISE, Timeout, TCPWRAP, ...), with an
// async_hooks init hook, and writes the running totals as JSON into ASYNC_COUNTS_DIR on each
// SIGUSR2 (the same signal that has node write its heap snapshot). A measuring aid only: the hook
// taxes every promise, so its process is not one to time.
'use strict';
const asyncHooks = require('node:async_hooks');
const fs = require('node:fs');
const path = require('node:path');

const counts = Object.create(null);
asyncHooks
  .createHook({
    init(_id, type) {
      counts[type] = (counts[type] ?? 0) + 1;
    },
  })
  .enable();

let serial = 0;
process.on('SIGUSR2', () => {
  const directory = process.env.ASYNC_COUNTS_DIR;
  if (directory) fs.writeFileSync(path.join(directory, `counts-${++serial}.json`), JSON.stringify(counts));
});

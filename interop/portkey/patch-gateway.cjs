// Applies the one-option fix the stock @portkey-ai/gateway 1.15.2 bundle needs: it fails every
// streamed response with 500 / "TypeError: immutable" because @hono/node-server replaces Node's
// global Request/Response by default; overrideGlobalObjects: false on its serve({...}) call
// keeps Node's own. The edit is literal (the minified names are 1.15.2's) and idempotent: a
// patched bundle is left alone, and any other text fails loudly, naming what was expected.
//
//   node patch-gateway.cjs PATH/TO/build/start-server.js
'use strict';
const fs = require('fs');

const file = process.argv[2];
if (!file) {
  console.error('usage: node patch-gateway.cjs PATH/TO/build/start-server.js');
  process.exit(2);
}
const from = 'e({fetch:Lu.fetch,port:Ku})';
const to = 'e({fetch:Lu.fetch,port:Ku,overrideGlobalObjects:false})';
const text = fs.readFileSync(file, 'utf8');
const count = (s) => text.split(s).length - 1;
if (count(to) === 1 && count(from) === 0) {
  console.log(`${file}: already patched (overrideGlobalObjects: false)`);
  process.exit(0);
}
if (count(from) !== 1 || count(to) !== 0) {
  console.error(`${file}: expected exactly one ${from} (found ${count(from)}, and ${count(to)} patched): not the @portkey-ai/gateway 1.15.2 bundle`);
  process.exit(1);
}
fs.writeFileSync(file, text.replace(from, to));
console.log(`${file}: patched serve({..., overrideGlobalObjects: false})`);

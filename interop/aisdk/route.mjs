// A plain AI SDK chat route (what a Next.js app/api/chat/route.ts does, on node:http): useChat's
// body in, streamText with the OpenAI provider's chat model pointed at the streambench mock, the
// UI message stream out. Tools run from their "_sim" arguments; the client's disconnect aborts.
import http from 'node:http';
import { convertToModelMessages, jsonSchema, isStepCount, streamText, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';

const provider = createOpenAI({ baseURL: `${process.env.MOCK_URL}/v1`, apiKey: 'x' });
const sleep = (ms, signal) => new Promise((ok, fail) => {
  const t = setTimeout(ok, ms);
  signal?.addEventListener('abort', () => { clearTimeout(t); fail(signal.reason); }, { once: true });
});
const simTool = tool({
  inputSchema: jsonSchema({ type: 'object' }),
  execute: async ({ _sim = {} }, { abortSignal }) => {
    await sleep(_sim.ms ?? 0, abortSignal);
    if (_sim.outcome === 'error') throw new Error(_sim.result ?? 'tool failed');
    return _sim.result ?? 'ok';
  },
});
// The tool names of streambench's embedded scenarios; a route must know a tool to run it.
const tools = Object.fromEntries((process.env.TOOLS ?? '').split(',').filter(Boolean).map((n) => [n, simTool]));

http.createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/api/chat') return res.writeHead(404).end();
  const abort = new AbortController();
  res.on('close', () => { if (!res.writableFinished) abort.abort(); });
  let body = '';
  for await (const chunk of req) body += chunk;
  const { messages } = JSON.parse(body);
  const result = streamText({
    model: provider.chat('mock'), messages: await convertToModelMessages(messages), tools,
    stopWhen: isStepCount(10), maxRetries: 0, abortSignal: abort.signal,
  });
  result.pipeUIMessageStreamToResponse(res, { onError: (e) => String(e?.message ?? e) });
}).listen(Number(process.env.PORT ?? 3000), '127.0.0.1', function () {
  console.log(`listening http://127.0.0.1:${this.address().port}`);
});

// A small ReAct graph whose model is the streambench mock: createReactAgent over ChatOpenAI
// (baseURL the mock's /v1) with one simulated tool per name in TOOLS. Each tool behaves as the
// "_sim" member of its arguments says (how long it runs, whether it fails, its result), as the
// reference runtime's tools do, and stops when LangGraph cancels the run.
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';

const sleep = (ms, signal) => new Promise((ok, fail) => {
  if (signal?.aborted) return fail(signal.reason);
  const t = setTimeout(ok, ms);
  signal?.addEventListener('abort', () => { clearTimeout(t); fail(signal.reason); }, { once: true });
});

const simTool = (name) => tool(async (input, config) => {
  const sim = input._sim ?? {};
  await sleep(sim.ms ?? 0, config?.signal);
  if (sim.outcome === 'error') throw new Error(sim.result ?? 'tool failed');
  return sim.result ?? 'ok';
}, { name, description: `simulated tool ${name}`, schema: z.object({}).passthrough() });

const llm = new ChatOpenAI({
  model: 'mock', apiKey: 'x', streaming: true, maxRetries: 0,
  configuration: { baseURL: `${process.env.MOCK_URL}/v1` },
});

const tools = (process.env.TOOLS ?? '').split(',').filter(Boolean).map(simTool);

export const graph = createReactAgent({ llm, tools });

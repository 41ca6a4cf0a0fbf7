// The official openai npm SDK's Responses API, streaming, against the streambench mock's
// POST /v1/responses: each scenario named on the command line is played turn by turn with
// client.responses.stream() and judged on what the SDK hands its caller (finalResponse()'s
// output_text, reasoning and function_call items), against the ground truth of
// `streambench scenarios show NAME --seed N --json`.
//
//   MOCK_URL=http://127.0.0.1:PORT node sdk.mjs GROUND-TRUTH.json...
//
// Like the Go SDK test (mockprovider/sdk_responses_test.go), the first request carries the
// scenario's directive in its user text and each tool turn continues with previous_response_id
// and the function_call_output items alone. One line per scenario:
//   ok NAME                 the SDK's result is the ground truth (a scripted error surfaced as an SDK error)
//   sdk-error NAME: MSG     the SDK threw where the script has no error (it noticed something wrong)
//   mismatch NAME: WHAT     the SDK returned without error, but not the ground truth (it did not notice)
// Exit 0 when every line is ok, 1 otherwise (2 on bad usage).
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

if (!process.env.MOCK_URL || process.argv.length < 3) {
  console.error('usage: MOCK_URL=URL node sdk.mjs GROUND-TRUTH.json... (from streambench scenarios show NAME --seed N --json)');
  process.exit(2);
}
const client = new OpenAI({ baseURL: `${process.env.MOCK_URL}/v1`, apiKey: 'x', maxRetries: 0 });
const directive = (name, seed, session) => `[[streambench scenario=${name} seed=${seed} session=${session}]]`;

// play runs one scenario to its end and returns its result line.
async function play(file) {
  const show = JSON.parse(readFileSync(file, 'utf8'));
  const { scenario, seed, expected } = show;
  const name = scenario.name;
  const httpError = scenario.faults?.httpError; // { turn, status }
  const midStream = scenario.faults?.midStreamError; // { turn, afterTokens, message }
  const turns = expected.Turns ?? [];
  const tools = [...new Set(scenario.turns.flatMap((t) => (t.toolCalls ?? []).map((c) => c.name)))]
    .map((n) => ({ type: 'function', name: n, parameters: { type: 'object' }, strict: false }));
  let previous;
  let input = [{ role: 'user', content: `Please help. ${directive(name, seed, `sdk-${name}-${seed}`)}` }];
  for (let turn = 0; turn < scenario.turns.length; turn++) {
    const failsHere = expected.FailedTurn === turn;
    let thinking = '';
    let final;
    try {
      const stream = client.responses.stream({
        model: 'mock-model', input, ...(tools.length && { tools }), ...(previous && { previous_response_id: previous }),
      });
      stream.on('response.reasoning_text.delta', (ev) => { thinking += ev.delta; });
      final = await stream.finalResponse();
    } catch (err) {
      if (!failsHere) return `sdk-error ${name}: turn ${turn}: ${err?.constructor?.name}: ${err?.message}`;
      // The scripted failure: an HTTP error with its status, or the stream's error event.
      const wantStatus = httpError?.turn === turn ? httpError.status : undefined;
      if (wantStatus !== undefined && err?.status !== wantStatus) {
        return `mismatch ${name}: turn ${turn}: got ${err?.constructor?.name} status ${err?.status} (${err?.message}), want HTTP ${wantStatus}`;
      }
      if (!String(err?.message).includes(expected.ProviderError)) {
        return `mismatch ${name}: turn ${turn}: error ${JSON.stringify(String(err?.message))} does not carry the scripted ${JSON.stringify(expected.ProviderError)}`;
      }
      if (midStream?.turn === turn && thinking !== (turns[turn]?.Thinking ?? '')) {
        return `mismatch ${name}: turn ${turn}: thinking before the error differs`;
      }
      return `ok ${name} (turn ${turn} failed as scripted: ${err.constructor.name}${err.status ? ` ${err.status}` : ''})`;
    }
    if (failsHere) {
      return `mismatch ${name}: turn ${turn}: the SDK returned ${final?.status} where the script fails with ${JSON.stringify(expected.ProviderError)}`;
    }
    const want = turns[turn];
    const calls = final.output.filter((o) => o.type === 'function_call');
    const reasoning = final.output.filter((o) => o.type === 'reasoning')
      .flatMap((o) => (o.content ?? []).map((c) => c.text)).join('');
    const problems = [];
    if (final.status !== 'completed') problems.push(`status ${final.status}`);
    if (final.output_text !== want.Text) problems.push(`output_text ${JSON.stringify(final.output_text)}, want ${JSON.stringify(want.Text)}`);
    if (reasoning !== want.Thinking) problems.push(`reasoning items ${JSON.stringify(reasoning.slice(0, 60))}…, want ${JSON.stringify(want.Thinking.slice(0, 60))}…`);
    if (thinking !== want.Thinking) problems.push('reasoning_text deltas differ from the ground truth');
    const wantCalls = want.ToolCalls ?? [];
    if (calls.length !== wantCalls.length) problems.push(`${calls.length} function_call items, want ${wantCalls.length}`);
    calls.forEach((c, i) => {
      const w = wantCalls[i];
      if (w && (c.call_id !== w.ID || c.name !== w.Name || c.arguments !== w.Arguments)) {
        problems.push(`function_call ${i}: ${c.call_id} ${c.name} ${c.arguments}, want ${w.ID} ${w.Name} ${w.Arguments}`);
      }
    });
    if (!final.usage) problems.push('no usage');
    if (problems.length) return `mismatch ${name}: turn ${turn}: ${problems.join('; ')}`;
    if (want.Final) return `ok ${name}`;
    previous = final.id;
    input = calls.map((c, i) => ({ type: 'function_call_output', call_id: c.call_id, output: wantCalls[i].Result }));
  }
  return `mismatch ${name}: the script ended without a final turn`;
}

let failed = 0;
for (const file of process.argv.slice(2)) {
  const line = await play(file).catch((err) => `sdk-error ${file}: ${err?.stack ?? err}`);
  if (!line.startsWith('ok ')) failed++;
  console.log(line);
}
process.exit(failed ? 1 : 0);

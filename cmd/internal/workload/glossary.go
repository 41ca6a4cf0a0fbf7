package workload

// Glossary explains, for a newcomer, the words load's and run's flags use; the README's
// glossary says the same at more length.
const Glossary = `Glossary:
  dialect      a wire format with its client and checker (--dialect; the list above comes from
               the registry, protocol/dialects)
  profile      an entry of the mix: a dialect with its options, targets and weight (chat-opted-in,
               chat-legacy, canvas, compose, ...); results are keyed by scenario x the dialect's
               label, which names the variant judged (sim-chat-optedin, sim-chat-legacy)
  scenario     the script of one session: turns, text, thinking, tools, aborts, provider faults
  mix          the weights of scenarios and profiles (--mix; default the embedded loadgen/mix.yaml)
  ground truth what the script says every client must end with; --no-ground-truth drops the
               content rules for a target whose model is not the mock
  Sim          an agent-workflow platform: its public chat (sim-chat) and its canvas workflow runs
               (sim-canvas) stream agent-events-v1
  Compose      an agent platform whose agent stream (compose) carries text, reasoning, tools,
               plans, swarm children and side events
  optedIn      sim-chat: the client sends X-Sim-Stream-Protocol: agent-events-v1 and gets live
               chunks and chunk_reset (and thinking and tool frames as the policy allows); a
               legacy client gets the settled answer in one chunk
  chunk_reset  a Sim frame telling an opted-in client to clear a block's provisional text (text
               streamed before tool calls, which the final turn replaces)
  R-converge   the rule that such a client ends with exactly the final-turn text of every block;
               every rule has an R-... ID, listed in docs/PROTOCOLS.md
  conclave     Compose's versioned key store (conclave events: write, read, list, delete); a
               key's version never goes back (R-conclave-version)
`

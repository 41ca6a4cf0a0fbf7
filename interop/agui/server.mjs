// server.mjs: an AG-UI server from npm parts: @ag-ui/langgraph's LangGraphAgent (the adapter
// CopilotKit uses to put a LangGraph deployment behind AG-UI) in front of a LangGraph server
// (LANGGRAPH_URL, graph "agent": interop/langgraph/graph.mjs, whose model is the streambench
// mock), served as AG-UI does it: POST /agui/agent with a RunAgentInput, answered with the
// agent's events as SSE (@ag-ui/encoder's EventEncoder). A client that leaves aborts the run.
//
//   LANGGRAPH_URL=http://127.0.0.1:2024 PORT=0 node server.mjs    prints "listening http://…"
import { createHash } from "node:crypto";
import http from "node:http";
import { LangGraphAgent } from "@ag-ui/langgraph";
import { EventEncoder } from "@ag-ui/encoder";

// uuidOf is a UUID (version 5 layout) derived from s.
function uuidOf(s) {
	const h = createHash("sha1").update(s).digest("hex");
	const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
	return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

// The adapter asks the LangGraph server for the graph's schemas on every run; the dev server
// answers 500 for this JavaScript graph after its extraction worker gives up (9 to 30 s on a
// busy machine), and the adapter then falls back to its own keys. Ask once per process and
// reuse the answer (the fallback), or every run would wait for the 500.
const getSchemaKeys = LangGraphAgent.prototype.getSchemaKeys;
let schemaKeys;
LangGraphAgent.prototype.getSchemaKeys = function () {
	schemaKeys ??= getSchemaKeys.call(this);
	return schemaKeys;
};

const base = new LangGraphAgent({ deploymentUrl: process.env.LANGGRAPH_URL, graphId: "agent" });

const server = http.createServer((req, res) => {
	if (req.method !== "POST" || req.url !== "/agui/agent") {
		res.writeHead(404).end();
		return;
	}
	let body = "";
	req.setEncoding("utf8");
	req.on("data", (chunk) => (body += chunk));
	req.on("end", () => {
		let input;
		try {
			input = JSON.parse(body);
		} catch (err) {
			res.writeHead(400, { "content-type": "text/plain" }).end(`request body: ${err.message}`);
			return;
		}
		// The LangGraph server takes only UUIDs for thread ids: the client's thread id, hashed
		// into one (the same thread id, the same LangGraph thread).
		if (typeof input.threadId === "string") input.threadId = uuidOf(input.threadId);
		const encoder = new EventEncoder({ accept: req.headers.accept });
		res.writeHead(200, { "content-type": encoder.getContentType(), "cache-control": "no-cache" });
		// One agent per run: LangGraphAgent keeps the run's progress on itself.
		const agent = base.clone();
		const sub = agent.run(input).subscribe({
			next: (event) => res.write(encoder.encodeSSE(event)),
			// What an AG-UI server sends when its agent throws: RUN_ERROR, then the end.
			error: (err) => {
				console.error(`run ${input.runId}: ${err?.stack ?? err}`);
				res.end(encoder.encodeSSE({ type: "RUN_ERROR", message: String(err?.message ?? err) }));
			},
			complete: () => res.end(),
		});
		res.on("close", () => {
			if (!res.writableFinished) {
				agent.abortRun();
				sub.unsubscribe();
			}
		});
	});
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
	console.log(`listening http://127.0.0.1:${server.address().port}`);
});

// verify.mjs: @ag-ui/client's own judgement of recorded AG-UI streams. Each FILE is one stream
// in the recording format of protocol/agui/testdata/README.md ('#' lines, then one "data: …"
// line per SSE frame). The frames are turned back into the bytes the server sent and go through
// the pipeline HttpAgent.runAgent runs a response through: transformHttpEventStream (SSE
// parsing and the event schemas), enforceEvents, transformChunks, then verifyEvents (the
// order check). One line per file on stdout, the error's message on the FAIL lines:
//
//   node verify.mjs FILE...      PASS FILE  |  FAIL FILE: message
//
// Exit 0 once every file was judged (whatever the verdicts), 2 on bad input.
import { readFileSync } from "node:fs";
import { asyncScheduler, lastValueFrom, scheduled } from "rxjs";
import { enforceEvents, transformChunks, transformHttpEventStream, verifyEvents } from "@ag-ui/client";

// sseBytes rebuilds the stream's body: every frame as "data: …\n\n".
function sseBytes(path) {
	let body = "";
	const lines = readFileSync(path, "utf8").split("\n");
	lines.forEach((line, i) => {
		if (line === "" || line.startsWith("#")) return;
		if (!line.startsWith("data: ")) {
			throw new Error(`${path}:${i + 1}: expected a "data: " line, got ${JSON.stringify(line.slice(0, 40))}`);
		}
		body += line + "\n\n";
	});
	return new TextEncoder().encode(body);
}

async function judge(path) {
	// Asynchronous, as a fetch is: transformHttpEventStream subscribes to its source at once,
	// and what a synchronous source emitted before the pipeline below subscribed would be lost.
	const http$ = scheduled(
		[
			{ type: "headers", status: 200, headers: new Headers({ "content-type": "text/event-stream" }) },
			{ type: "data", data: sseBytes(path) },
		],
		asyncScheduler,
	);
	const events$ = transformHttpEventStream(http$).pipe(enforceEvents(), transformChunks(), verifyEvents());
	await lastValueFrom(events$, { defaultValue: undefined });
}

const files = process.argv.slice(2);
if (files.length === 0) {
	console.error("usage: node verify.mjs FILE...");
	process.exit(2);
}
// The client logs what it drops or fixes up; this output is the verdicts only.
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "true";
for (const path of files) {
	try {
		await judge(path);
		console.log(`PASS ${path}`);
	} catch (err) {
		if (err?.code === "ENOENT" || String(err?.message).includes("expected a \"data: \" line")) {
			console.error(`verify.mjs: ${err.message}`);
			process.exit(2);
		}
		console.log(`FAIL ${path}: ${String(err?.message ?? err).replaceAll("\n", " ")}`);
	}
}

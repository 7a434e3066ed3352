// The far end of the traces when the benchmark measures a server with tracing on: an OTLP/HTTP endpoint on loopback
// that answers every POST /v1/traces at once and only counts what came (spans, bytes), so it takes as little of the
// machine's two cores from the server under measure as a collector can. docs/performance.md, "Traces", runs it as:
//
//   npx bun scripts/bench/otlp-sink.ts 4318 &
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npx bun scripts/bench/run.ts --small --only "GET /v1/feeds/{id}"
//
// It prints its counts every 5 s and when stopped (SIGINT, SIGTERM); it stops by itself after an hour.
const port = Number(process.argv[2] ?? 4318)
const counts = { posts: 0, spans: 0, bytes: 0 }
const started = Date.now()

/** Spans in an OTLP JSON body, counted by their "spanId" keys without parsing it. */
function spansIn(body: string): number {
  let n = 0
  for (let at = body.indexOf('"spanId"'); at >= 0; at = body.indexOf('"spanId"', at + 8)) n++
  return n
}

const sink = Bun.serve({
  hostname: '127.0.0.1',
  port,
  async fetch(request) {
    if (request.method !== 'POST' || !request.url.endsWith('/v1/traces')) return new Response(null, { status: 404 })
    const body = await request.text()
    counts.posts++
    counts.bytes += body.length
    counts.spans += spansIn(body)
    return Response.json({})
  },
})

const report = () => {
  const s = ((Date.now() - started) / 1000).toFixed(0)
  console.log(`otlp-sink: ${counts.spans} spans in ${counts.posts} posts, ${(counts.bytes / 1e6).toFixed(1)} MB, ${s} s`)
}
const timer = setInterval(report, 5000)
const finish = () => {
  clearInterval(timer)
  report()
  sink.stop(true)
  process.exit(0)
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, finish)
setTimeout(finish, 3600_000).unref()
console.log(`otlp-sink: listening on http://127.0.0.1:${sink.port}/v1/traces`)

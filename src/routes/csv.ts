// A CSV answer streamed from lines made as they are pulled (a large export never sits whole in memory), and whether a
// request asks for CSV: format=csv, or (no format given) an Accept header that names text/csv.
const encoder = new TextEncoder()

export function wantsCsv(format: string | undefined, accept: string | null): boolean {
  if (format !== undefined) return format === 'csv'
  return accept !== null && /(^|[\s,])text\/csv\b/i.test(accept)
}

export function csvAnswer(filename: string, lines: AsyncGenerator<string>): Response {
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await lines.next()
      if (next.done) controller.close()
      else controller.enqueue(encoder.encode(next.value))
    },
    async cancel() {
      await lines.return(undefined)
    },
  })
  return new Response(body, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${filename}"`,
      'cache-control': 'private, no-store',
    },
  })
}

// The control socket: a running server takes operations on its data directory (backup, verify, gc, CAR import and
// export) from a command on the same machine, over a Unix socket in that directory. Only who may read the data
// directory may connect (the socket is 0600 in a 0700 directory). Answers are JSON lines: progress, then the result
// or the error.
import { chmodSync, rmSync } from 'node:fs'
import type { Progress } from './data.ts'

export const CONTROL_SOCKET = 'control.sock'

export type Operation = (command: string, args: string[], progress: Progress) => Promise<unknown>

export function controlSocket(path: string, run: Operation) {
  rmSync(path, { force: true }) // left by a crash: this server holds the data directory's lock
  const encoder = new TextEncoder()
  const server = Bun.serve({
    unix: path,
    async fetch(request) {
      if (request.method !== 'POST' || new URL(request.url).pathname !== '/run') return new Response('not found', { status: 404 })
      const { command, args } = (await request.json()) as { command: string; args: string[] }
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          const send = (line: unknown) => controller.enqueue(encoder.encode(`${JSON.stringify(line)}\n`))
          let last = 0
          const progress: Progress = (what, done, total) => {
            const now = performance.now()
            if (now - last < 250 && done !== total) return // a line four times a second is enough for a progress bar
            last = now
            send({ progress: { what, done, total } })
          }
          try {
            send({ result: await run(command, args, progress) })
          } catch (error) {
            send({ error: (error as Error).message })
          }
          controller.close()
        },
      })
      return new Response(body, { headers: { 'content-type': 'application/x-ndjson' } })
    },
  })
  chmodSync(path, 0o600)
  return {
    stop() {
      server.stop(true)
      rmSync(path, { force: true })
    },
  }
}

/** Runs an operation in the server listening on `path`; its progress goes to `progress`. */
export async function runInServer(path: string, command: string, args: string[], progress: Progress): Promise<unknown> {
  const response = await fetch('http://trellis/run', { unix: path, method: 'POST', body: JSON.stringify({ command, args }) })
  const decoder = new TextDecoder()
  let buffered = ''
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true })
    let newline: number
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffered.slice(0, newline)) as {
        progress?: { what: string; done: number; total?: number }
        result?: unknown
        error?: string
      }
      buffered = buffered.slice(newline + 1)
      if (line.progress) progress(line.progress.what, line.progress.done, line.progress.total)
      else if (line.error !== undefined) throw new Error(line.error)
      else return line.result
    }
  }
  throw new Error('the server closed the control socket without an answer')
}

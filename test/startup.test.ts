// Starting the server: a start that fails leaves nothing behind and says why in one line.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, tempDir } from '../dev/server.ts'

const ROOT = join(import.meta.dir, '..')
const scratch: string[] = []
const dir = () => {
  const path = tempDir()
  scratch.push(path)
  return path
}
afterAll(() => {
  for (const path of scratch) rmSync(path, { recursive: true, force: true })
})

/** `bun src/main.ts <args>`: exit code and output. */
async function trellis(args: string[]) {
  const run = Bun.spawn([process.execPath, 'src/main.ts', ...args], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  return { code, stdout, stderr }
}

describe('a start that fails', () => {
  test('on a port in use: one line naming it, exit 1, and no trellis.pid left in its data directory', async () => {
    const first = await startTestServer()
    try {
      const port = new URL(first.url).port
      const dataDir = dir()
      const second = await trellis(['--port', port, '--host', '127.0.0.1', '--data-dir', dataDir])
      expect([second.code, second.stderr]).toEqual([1, `trellis: cannot listen on 127.0.0.1:${port}: the port is in use\n`])
      expect(readdirSync(dataDir).filter((name) => name.startsWith('trellis.pid') || name === 'control.sock')).toEqual([])
      // The data directory is free: a server starts there at once.
      const third = await startTestServer({}, { dataDir })
      await third.stop()
    } finally {
      await first.dispose()
    }
  })

  test('on an address of no interface here: one line naming it', async () => {
    const dataDir = dir()
    const run = await trellis(['--port', '0', '--host', '192.0.2.1', '--data-dir', dataDir]) // TEST-NET-1: never local
    expect([run.code, run.stderr]).toEqual([1, 'trellis: cannot listen on 192.0.2.1:0: no interface of this machine has that address\n'])
    expect(existsSync(join(dataDir, 'trellis.pid'))).toBe(false)
  })
})

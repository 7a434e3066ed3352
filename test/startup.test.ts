// Starting the server: a start that fails leaves nothing behind and says why in one line, and one process holds a
// data directory even when two start at the same instant.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, tempDir } from '../dev/server.ts'
import { listeningUrl, waitForLine } from '../dev/lines.ts'

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

describe('one process per data directory', () => {
  /** Starts `bun src/main.ts` on `dataDir`; resolves with its url once listening, or its exit code and stderr. */
  function start(dataDir: string) {
    const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        TRELLIS_DATA_DIR: dataDir,
        TRELLIS_PORT: '0',
        TRELLIS_HOST: '127.0.0.1',
        TRELLIS_LOG: 'warn',
        TRELLIS_RATE_LIMIT: 'off',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const stderr = new Response(proc.stderr).text()
    const outcome = waitForLine(proc.stdout, listeningUrl, { timeoutMs: 20_000, what: 'trellis' }).then(
      (url) => ({ url, code: null as number | null, stderr: '' }),
      async () => ({ url: null, code: await proc.exited, stderr: await stderr }),
    )
    return { proc, outcome }
  }

  test('two servers starting at the same instant on a fresh data directory: one serves, the other stops at the lock', async () => {
    for (let round = 0; round < 5; round++) {
      const dataDir = dir()
      const both = [start(dataDir), start(dataDir)]
      const outcomes = await Promise.all(both.map((s) => s.outcome))
      try {
        const winners = outcomes.filter((o) => o.url)
        expect(winners).toHaveLength(1)
        const loser = outcomes.find((o) => !o.url)!
        // Refused by the lock, before it opened the database or the content store.
        expect([loser.code, loser.stderr]).toEqual([
          1,
          `trellis: the data directory ${dataDir} is in use by another trellis ` +
            `process${loser.stderr.includes('(pid') ? ` (pid ${both[outcomes.indexOf(winners[0]!)]!.proc.pid})` : ''}\n`,
        ])
        expect((await fetch(`${winners[0]!.url}/health`)).status).toBe(200)
      } finally {
        for (const s of both) s.proc.kill('SIGTERM')
        await Promise.all(both.map((s) => s.proc.exited))
      }
    }
  }, 120_000)

  test('two processes claiming a data directory at the same microsecond, 40 rounds: never two holders', async () => {
    const claims: string[] = []
    for (let round = 0; round < 40; round++) {
      const dataDir = dir()
      const at = Date.now() + 250 // both are loaded by then, and spin until it
      const both = [0, 1].map(() =>
        Bun.spawn([process.execPath, 'test/helpers/claim-data-dir.ts', dataDir, String(at)], { cwd: ROOT, stdout: 'pipe' }),
      )
      // Each says what it got while a holder still holds; then the holder is let go.
      const said = await Promise.all(
        both.map(async (p) => {
          const reader = p.stdout.getReader()
          let text = ''
          while (!text.includes('\n')) {
            const { value, done } = await reader.read()
            if (done) break
            text += new TextDecoder().decode(value)
          }
          reader.releaseLock()
          return text.trim()
        }),
      )
      writeFileSync(join(dataDir, 'release'), '')
      await Promise.all(both.map((p) => p.exited))
      claims.push(said.sort().join(' '))
    }
    expect(claims.filter((claim) => claim !== 'held refused')).toEqual([])
  }, 120_000)

  test('a live holder whose trellis.pid was deleted still keeps a second server out, before it opens any store', async () => {
    const first = await startTestServer()
    try {
      rmSync(join(first.dataDir, 'trellis.pid')) // a tidy-up script, or a hand
      const second = start(first.dataDir)
      const outcome = await second.outcome
      expect([outcome.code, outcome.stderr]).toEqual([
        1,
        `trellis: the data directory ${first.dataDir} is in use by another trellis process\n`,
      ])
      expect((await fetch(`${first.url}/health`)).status).toBe(200)
    } finally {
      await first.dispose()
    }
  })

  test('a trellis.pid left by a crash, naming a pid since reused by another program, does not keep a server out', async () => {
    const dataDir = dir()
    writeFileSync(join(dataDir, 'trellis.pid'), `${process.pid}\n`) // alive, and not a trellis server
    const server = await startTestServer({}, { dataDir })
    try {
      expect((await fetch(`${server.url}/health`)).status).toBe(200)
    } finally {
      await server.stop()
    }
  })
})

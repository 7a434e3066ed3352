// nginx as the benchmark's balancer: docs/examples/nginx.conf as operators get it, with this run's ports put in its
// marked lines and its files in a temporary directory. Installed from Debian (nginx-light) when missing, as wrk is.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Child } from './processes.ts'
import { ensureDebianPackage } from './wrk.ts'

const EXAMPLE = resolve(import.meta.dir, '..', '..', 'docs', 'examples', 'nginx.conf')

/** The example with `port` to listen on and `targets` as its upstream servers; its scratch files under `dir`. */
export function nginxConfig(port: number, targets: string[], dir: string): string {
  const lines = readFileSync(EXAMPLE, 'utf8')
    .split('\n')
    .flatMap((line) => {
      if (line.includes('#@SERVERS@')) return targets.map((target) => `    server ${new URL(target).host};`)
      if (line.includes('#@LISTEN@')) return [`    listen 127.0.0.1:${port};`]
      if (line.trim() === 'http {')
        return [line, ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((k) => `  ${k}_temp_path ${join(dir, k)};`)]
      return [line]
    })
  return [`daemon off;`, `pid ${join(dir, 'nginx.pid')};`, `error_log ${join(dir, 'error.log')} warn;`, ...lines].join('\n')
}

export async function startNginx(port: number, targets: string[], log: (line: string) => void): Promise<Child> {
  ensureDebianPackage('nginx', 'nginx-light', log)
  const dir = mkdtempSync(join(tmpdir(), 'trellis-bench-nginx-'))
  writeFileSync(join(dir, 'nginx.conf'), nginxConfig(port, targets, dir))
  const proc = Bun.spawn(['nginx', '-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const url = `http://127.0.0.1:${port}`
  const errors = () => {
    try {
      return readFileSync(join(dir, 'error.log'), 'utf8').slice(-2000)
    } catch {
      return ''
    }
  }
  const stop = async () => {
    if (proc.exitCode === null) {
      proc.kill('SIGQUIT') // graceful: the workers finish their requests
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
      await proc.exited
      clearTimeout(timer)
    }
    rmSync(dir, { recursive: true, force: true })
  }
  for (const started = performance.now(); ; await Bun.sleep(20)) {
    if (proc.exitCode !== null) {
      const why = `${await new Response(proc.stderr).text()}${errors()}`
      await stop()
      throw new Error(`nginx exited ${proc.exitCode}:\n${why}`)
    }
    if (
      await fetch(`${url}/health`).then(
        (r) => r.arrayBuffer().then(() => true),
        () => false,
      )
    )
      break
    if (performance.now() - started > 10_000) {
      await stop()
      throw new Error(`nginx did not answer within 10 s:\n${errors()}`)
    }
  }
  return { pid: proc.pid, url, tail: errors, stop }
}

// wrk: installing it when missing, running it, and reading its --latency report.
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface WrkResult {
  url: string
  rps: number
  requests: number
  p50_ms: number | null
  p99_ms: number | null
  max_ms: number | null
  non_2xx: number
  socket_errors: { connect: number; read: number; write: number; timeout: number }
}

const has = (cmd: string) => Bun.spawnSync(['sh', '-c', `command -v ${cmd}`]).exitCode === 0

/** apt-get install -y `pkg` when `command` is missing (with sudo -n when not root); throws with the reason when it cannot. */
export function ensureDebianPackage(command: string, pkg: string, log: (line: string) => void): void {
  if (has(command)) return
  const root = process.getuid?.() === 0
  if (!root && !has('sudo'))
    throw new Error(`${command} is not installed and this user is not root (no sudo): run \`apt-get install -y ${pkg}\` as root`)
  const sudo = root ? [] : ['sudo', '-n']
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const run = (args: string[]) => Bun.spawnSync([...sudo, ...args], { env, stdout: 'pipe', stderr: 'pipe' })
  log(`bench: ${command} is missing; installing ${pkg} with apt-get`)
  let result = run(['apt-get', 'install', '-y', pkg])
  if (result.exitCode !== 0) {
    // A fresh container often has no package lists yet.
    run(['apt-get', 'update'])
    result = run(['apt-get', 'install', '-y', pkg])
  }
  if (result.exitCode !== 0 || !has(command)) {
    throw new Error(
      `could not install ${pkg} (${[...sudo, 'apt-get', 'install', '-y', pkg].join(' ')} ` +
        `exited ${result.exitCode}):\n${result.stderr.toString().trim().slice(-800)}\nInstall it ` +
        `yourself (Debian package "${pkg}") and run again.`,
    )
  }
}

export const ensureWrk = (log: (line: string) => void): void => ensureDebianPackage('wrk', 'wrk', log)

function toMs(value: string, unit: string): number {
  const n = Number(value)
  return unit === 'us' ? n / 1000 : unit === 'ms' ? n : unit === 's' ? n * 1000 : unit === 'm' ? n * 60_000 : n
}

export function parseWrk(url: string, out: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)
  if (!rps) throw new Error(`wrk printed no Requests/sec for ${url}:\n${out}`)
  const latency = (label: string) => {
    const m = new RegExp(`^\\s+${label}\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(out)
    return m ? toMs(m[1]!, m[2]!) : null
  }
  const max = /Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s|m)/.exec(out)
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  return {
    url,
    rps: Number(rps[1]),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
    p50_ms: latency('50%'),
    p99_ms: latency('99%'),
    max_ms: max ? toMs(max[1]!, max[2]!) : null,
    non_2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    socket_errors: {
      connect: Number(errors?.[1] ?? 0),
      read: Number(errors?.[2] ?? 0),
      write: Number(errors?.[3] ?? 0),
      timeout: Number(errors?.[4] ?? 0),
    },
  }
}

/**
 * What a wrk run sends besides GET <url>: a method and body (through a Lua script) and extra headers; `paths`: the
 * paths to send in turn instead of the URL's own (each thread starts half the list apart, so no two requests in
 * flight name the same path when the list is longer than the connections).
 */
export interface WrkRequest {
  method?: string
  headers?: Record<string, string>
  body?: string
  paths?: string[]
}

/** The Lua script wrk needs for anything but a bare GET (written once per distinct request). */
function scriptFor(request: WrkRequest): string | null {
  if (!request.method && request.body === undefined && !request.paths) return null
  const path = join(tmpdir(), `trellis-bench-wrk-${Bun.hash(JSON.stringify(request)).toString(16)}.lua`)
  const lines = [`wrk.method = ${JSON.stringify(request.method ?? 'GET')}`]
  if (request.body !== undefined) lines.push(`wrk.body = ${JSON.stringify(request.body)}`)
  if (request.paths) {
    lines.push(
      `paths = { ${request.paths.map((p) => JSON.stringify(p)).join(', ')} }`,
      'local threads = 0',
      'function setup(thread) thread:set("next_path", threads * math.floor(#paths / 2)); threads = threads + 1 end',
      'function request() next_path = next_path + 1; return wrk.format(nil, paths[(next_path % #paths) + 1]) end',
    )
  }
  writeFileSync(path, lines.join('\n') + '\n')
  return path
}

/** wrk -t2 -c<connections> -d<seconds>s --latency <url>; async so the caller can sample the server meanwhile. */
export async function wrk(url: string, seconds: number, connections = 50, request: WrkRequest = {}): Promise<WrkResult> {
  const script = scriptFor(request)
  const extra = [...Object.entries(request.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), ...(script ? ['-s', script] : [])]
  const proc = Bun.spawn(['wrk', '-t2', `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', '10s', ...extra, url], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  if ((await proc.exited) !== 0) throw new Error(`wrk exited ${proc.exitCode} for ${url}: ${err}${out}`)
  return parseWrk(url, out)
}

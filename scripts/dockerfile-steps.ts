// Runs the Dockerfile without Docker, as far as a machine without it can: the build stage's steps as written (COPY
// from the build context minus .dockerignore, RUN in its WORKDIR, on this machine's Node and npm), then the runtime
// stage's artifact started as the container would start it: its ENV, ENTRYPOINT and STOPSIGNAL, as an unprivileged
// user when this runs as root, with no writable home or $TMPDIR (a read-only root filesystem), checked by its
// HEALTHCHECK command; the data commands run in it as `docker exec` would run them.
//
//   npx bun scripts/dockerfile-steps.ts [--keep] [--build-arg NAME=value]...     (exit 0 when every step passed)
//
// A --build-arg reaches the RUN steps after the build stage's ARG that declares it, as `docker build --build-arg`
// does; one no ARG declares stops the run (docker would only warn, and the value would be silently unused).
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '..')
const argv = process.argv.slice(2)
const keep = argv.includes('--keep')
const buildArgs = new Map<string, string>()
for (let i = 0; i < argv.length; i++) {
  if (argv[i] !== '--build-arg') continue
  const pair = argv[++i] ?? ''
  if (!pair.includes('=')) {
    console.error(`dockerfile: --build-arg needs NAME=value, got ${JSON.stringify(pair)}`)
    process.exit(2)
  }
  buildArgs.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1))
}

interface Instruction {
  op: string
  args: string
}
interface Stage {
  from: string
  name: string | null
  steps: Instruction[]
}

function parse(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
  const stages: Stage[] = []
  for (const line of lines) {
    const [op, ...rest] = line.split(/\s+/)
    const args = rest.join(' ')
    if (op!.toUpperCase() === 'FROM') {
      const [image, as, name] = rest
      stages.push({ from: image!, name: as?.toUpperCase() === 'AS' ? name! : null, steps: [] })
    } else stages.at(-1)!.steps.push({ op: op!.toUpperCase(), args })
  }
  return stages
}

const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim().replace(/\/$/, ''))
  .filter(Boolean)
const log = (line: string) => console.log(`dockerfile: ${line}`)
const fail = (line: string): never => {
  console.error(`dockerfile: FAILED: ${line}`)
  process.exit(1)
}

function copyFromContext(sources: string[], dest: string): void {
  for (const source of sources) {
    if (source === '.') {
      for (const name of readdirSync(ROOT)) if (!ignored.includes(name)) cpSync(join(ROOT, name), join(dest, name), { recursive: true })
    } else {
      if (!existsSync(join(ROOT, source))) fail(`COPY ${source}: not in the build context`)
      cpSync(join(ROOT, source), join(dest, source), { recursive: true })
    }
  }
}

const stages = parse(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
const [build, runtime] = stages
if (!build || !runtime || stages.length !== 2) fail('expected two stages: build, then runtime')
const work = mkdtempSync(join(tmpdir(), 'trellis-dockerfile-'))
const stageRoot = join(work, 'build-stage')
let workdir = stageRoot
// What RUN sees: this machine's environment without any name the Dockerfile takes as an argument (as in a fresh
// image), plus the arguments declared so far.
const declared = new Set(build!.steps.filter((step) => step.op === 'ARG').map((step) => step.args.split('=')[0]!))
for (const name of buildArgs.keys()) if (!declared.has(name)) fail(`--build-arg ${name}: the build stage declares no ARG ${name}`)
const runEnv: Record<string, string | undefined> = { ...process.env, CI: '1' }
for (const name of declared) delete runEnv[name]
for (const step of build!.steps) {
  if (step.op === 'ARG') {
    const [name, fallback] = [step.args.split('=')[0]!, step.args.includes('=') ? step.args.slice(step.args.indexOf('=') + 1) : undefined]
    const value = buildArgs.get(name) ?? fallback
    if (value !== undefined) runEnv[name] = value
    log(`ARG ${name}${value === undefined ? '' : `=${value}`}`)
  } else if (step.op === 'WORKDIR') {
    workdir = join(stageRoot, step.args)
    mkdirSync(workdir, { recursive: true })
  } else if (step.op === 'COPY') {
    const parts = step.args.split(/\s+/)
    copyFromContext(parts.slice(0, -1), workdir)
  } else if (step.op === 'RUN') {
    log(`RUN ${step.args}`)
    const run = Bun.spawnSync(['sh', '-c', step.args], { cwd: workdir, stdout: 'inherit', stderr: 'inherit', env: runEnv })
    if (run.exitCode !== 0) fail(`RUN ${step.args} exited ${run.exitCode}`)
  } else fail(`unexpected ${step.op} in the build stage`)
}

// The runtime stage: what it copies, its environment, how it starts, stops and checks health.
const env: Record<string, string> = {}
let entrypoint: string[] = []
let healthcheck: string[] = []
let stopSignal = 'SIGTERM'
let artifact = ''
for (const step of runtime!.steps) {
  if (step.op === 'COPY') {
    const match = /^--from=(\S+)\s+(\S+)\s+(\S+)$/.exec(step.args)
    if (!match || match[1] !== build!.name) fail(`runtime COPY ${step.args}: only --from=${build!.name} is expected`)
    artifact = join(stageRoot, match![2]!)
    if (!existsSync(artifact)) fail(`COPY --from=${match![1]} ${match![2]}: the build stage did not produce it`)
  } else if (step.op === 'ENV') {
    for (const pair of step.args.match(/\S+=\S+/g) ?? []) env[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1)
  } else if (step.op === 'ENTRYPOINT') entrypoint = JSON.parse(step.args)
  else if (step.op === 'STOPSIGNAL') stopSignal = step.args
  else if (step.op === 'HEALTHCHECK') healthcheck = JSON.parse(step.args.slice(step.args.indexOf('CMD') + 3).trim())
}
if (!entrypoint.length || !healthcheck.length) fail('the runtime stage needs an ENTRYPOINT and a HEALTHCHECK CMD')

// Paths of the image, mapped into a scratch root: the binary, and the data volume (owned by the unprivileged user).
const image = join(work, 'image')
const binary = join(image, 'trellis')
mkdirSync(image, { recursive: true })
cpSync(artifact, binary)
const version = Bun.spawnSync([binary, '--version'], { cwd: image, env: { PATH: '/usr/bin:/bin' }, stdout: 'pipe', stderr: 'pipe' })
if (version.exitCode !== 0) fail(`trellis --version exited ${version.exitCode}: ${version.stderr}`)
log(`the image runs ${version.stdout.toString().trim()}`)
const dataDir = join(image, 'data')
mkdirSync(dataDir, { mode: 0o700 })
const unprivileged = process.getuid?.() === 0 && Bun.spawnSync(['sh', '-c', 'command -v setpriv']).exitCode === 0
if (unprivileged) {
  chmodSync(work, 0o755) // the unprivileged user must reach the image's files, as in the image
  chmodSync(image, 0o755)
  chownSync(dataDir, 65534, 65534)
}
writeFileSync(join(image, 'not-a-dir'), '') // home and $TMPDIR below a file: nothing else is writable
const containerEnv = {
  PATH: '/usr/bin:/bin',
  HOME: join(image, 'not-a-dir', 'home'),
  TMPDIR: join(image, 'not-a-dir', 'tmp'),
  ...env,
  TRELLIS_DATA_DIR: dataDir,
  TRELLIS_PORT: '0',
}
const as = (command: string[]) => (unprivileged ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...command] : command)
const path = (p: string) => (p === entrypoint[0] || p === healthcheck[0] ? binary : p)

log(`start ${entrypoint.join(' ')}${unprivileged ? ' as uid 65534' : ''}, env ${Object.keys(env).join(', ')}`)
const server = Bun.spawn(as(entrypoint.map(path)), { cwd: image, env: containerEnv, stdout: 'pipe', stderr: 'pipe' })
let port = ''
const decoder = new TextDecoder()
const reader = server.stdout.getReader()
const deadline = Date.now() + 20_000
let output = ''
while (!port && Date.now() < deadline) {
  const { value, done } = await reader.read()
  if (done) break
  output += decoder.decode(value)
  port = /"url":"http:\/\/[^"]*:(\d+)"/.exec(output)?.[1] ?? ''
}
if (!port) {
  server.kill('SIGKILL')
  fail(`the server did not start:\n${output}${await new Response(server.stderr).text()}`)
}
log(`listening on port ${port}`)
const health = Bun.spawnSync(as(healthcheck.map(path)), {
  cwd: image,
  env: { ...containerEnv, TRELLIS_PORT: port },
  stdout: 'pipe',
  stderr: 'pipe',
})
if (health.exitCode !== 0) fail(`HEALTHCHECK exited ${health.exitCode}: ${health.stderr}`)
log('HEALTHCHECK passed')
// `docker exec <container> trellis <command>`: the same binary, same user and environment, served by the live server.
const backups = join(image, 'backups') // a volume mounted for backups, writable by the container's user
mkdirSync(backups, { mode: 0o700 })
if (unprivileged) chownSync(backups, 65534, 65534)
for (const command of [['verify'], ['gc'], ['backup', join(backups, 'first')]]) {
  const ran = Bun.spawnSync(as([binary, ...command]), { cwd: image, env: containerEnv, stdout: 'pipe', stderr: 'pipe' })
  if (ran.exitCode !== 0) fail(`docker exec … trellis ${command.join(' ')} exited ${ran.exitCode}: ${ran.stderr}`)
  if (!/done in/.test(ran.stderr.toString())) fail(`trellis ${command[0]} printed no result: ${ran.stderr}`)
}
log('verify, gc and backup ran in the container against the live server')
server.kill(stopSignal as NodeJS.Signals)
const code = await server.exited
if (code !== 0) fail(`after ${stopSignal} the server exited ${code}`)
log(`${stopSignal}: exited 0`)
const unhealthy = Bun.spawnSync(as(healthcheck.map(path)), {
  cwd: image,
  env: { ...containerEnv, TRELLIS_PORT: port },
  stdout: 'pipe',
  stderr: 'pipe',
})
if (unhealthy.exitCode === 0) fail('HEALTHCHECK passed with the server stopped')
log('HEALTHCHECK fails once the server is stopped')
if (!keep) rmSync(work, { recursive: true, force: true })
log('every step passed')

// A private network namespace for tests that need a network this host does not have: its own loopback with
// "public" addresses bound to it, and its own resolver (`ip netns exec` bind-mounts /etc/netns/<name>/resolv.conf
// over /etc/resolv.conf for the commands it runs). Needs root and iproute2 (`apt-get install -y iproute2`).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'

export interface Netns {
  name: string
  /** `command`, run inside the namespace. */
  exec(command: string[]): string[]
  dispose(): void
}

function run(command: string[]): void {
  const result = Bun.spawnSync(command, { stdout: 'pipe', stderr: 'pipe' })
  if (result.exitCode !== 0) throw new Error(`${command.join(' ')}: exit ${result.exitCode}: ${result.stderr.toString()}`)
}

/** Why namespaces cannot be made here, or null when they can. */
export function netnsUnavailable(): string | null {
  if (!Bun.which('ip')) return 'iproute2 (the ip command) is not installed: apt-get install -y iproute2'
  if (process.getuid?.() !== 0) return 'creating a network namespace needs root'
  return null
}

/** A namespace whose loopback also carries `addresses` and whose resolver is `nameserver` (inside it). */
export function openNetns(addresses: string[], nameserver = '127.0.0.1'): Netns {
  const name = `trellis-test-${randomBytes(4).toString('hex')}`
  run(['ip', 'netns', 'add', name])
  const etc = `/etc/netns/${name}`
  const dispose = () => {
    Bun.spawnSync(['ip', 'netns', 'del', name])
    rmSync(etc, { recursive: true, force: true })
  }
  try {
    run(['ip', '-n', name, 'link', 'set', 'lo', 'up'])
    for (const address of addresses) run(['ip', '-n', name, 'addr', 'add', `${address}/32`, 'dev', 'lo'])
    mkdirSync(etc, { recursive: true })
    writeFileSync(`${etc}/resolv.conf`, `nameserver ${nameserver}\noptions attempts:1 timeout:2\n`)
  } catch (error) {
    dispose()
    throw error
  }
  return { name, exec: (command) => ['ip', 'netns', 'exec', name, ...command], dispose }
}

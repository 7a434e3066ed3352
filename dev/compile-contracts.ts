// Compiles contracts/*.sol with the solc-js compiler bundled in the npm package `solc` (no compiler download)
// and writes contracts/<Name>.json (ABI, creation and runtime bytecode, compiler version, source hash).
//
//   npx bun dev/compile-contracts.ts           write the artifacts
//   npx bun dev/compile-contracts.ts --check   exit 1 if a committed artifact differs from a fresh compile
//
// The artifacts are committed so that tests and the chain CLI never compile; test/chain.test.ts checks that each
// artifact's sourceSha256 matches its .sol file, so an edited contract without a recompile fails the tests.
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'

export const CONTRACTS_DIR = join(import.meta.dir, '..', 'contracts')
export const CONTRACT_NAMES = ['TestUSDC', 'Multicall3'] as const
export type ContractName = (typeof CONTRACT_NAMES)[number]

/** Fixed settings: the artifacts must be reproducible. `cancun` runs on anvil's default hardfork and on Base. */
export const SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  metadata: { bytecodeHash: 'none', appendCBOR: false },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
} as const

export interface ContractArtifact {
  contractName: string
  sourceFile: string
  sourceSha256: string
  compiler: { version: string; settings: { optimizer: { enabled: boolean; runs: number }; evmVersion: string } }
  abi: unknown[]
  bytecode: `0x${string}`
  deployedBytecode: `0x${string}`
}

export function sourceSha256(name: ContractName): string {
  return createHash('sha256')
    .update(readFileSync(join(CONTRACTS_DIR, `${name}.sol`)))
    .digest('hex')
}

export function compileContracts(): Record<ContractName, ContractArtifact> {
  const solc = createRequire(import.meta.url)('solc') as {
    version(): string
    compile(input: string): string
  }
  const sources: Record<string, { content: string }> = {}
  for (const name of CONTRACT_NAMES) sources[`${name}.sol`] = { content: readFileSync(join(CONTRACTS_DIR, `${name}.sol`), 'utf8') }
  const output = JSON.parse(solc.compile(JSON.stringify({ language: 'Solidity', sources, settings: SOLC_SETTINGS })))
  const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === 'error')
  if (errors.length) throw new Error(`solc failed:\n${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n')}`)
  const warnings = (output.errors ?? []).filter((e: { severity: string }) => e.severity !== 'error')
  if (warnings.length) console.warn(warnings.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n'))
  const result = {} as Record<ContractName, ContractArtifact>
  for (const name of CONTRACT_NAMES) {
    const contract = output.contracts[`${name}.sol`][name]
    result[name] = {
      contractName: name,
      sourceFile: `${name}.sol`,
      sourceSha256: sourceSha256(name),
      compiler: { version: solc.version(), settings: { optimizer: SOLC_SETTINGS.optimizer, evmVersion: SOLC_SETTINGS.evmVersion } },
      abi: contract.abi,
      bytecode: `0x${contract.evm.bytecode.object}`,
      deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
    }
  }
  return result
}

export function artifactPath(name: ContractName): string {
  return join(CONTRACTS_DIR, `${name}.json`)
}

if (import.meta.main) {
  const check = process.argv.includes('--check')
  const started = performance.now()
  const artifacts = compileContracts()
  let stale = false
  for (const name of CONTRACT_NAMES) {
    const text = `${JSON.stringify(artifacts[name], null, 2)}\n`
    if (check) {
      let committed = ''
      try {
        committed = readFileSync(artifactPath(name), 'utf8')
      } catch {}
      if (committed !== text) {
        stale = true
        console.error(`${name}.json is stale: run npx bun dev/compile-contracts.ts`)
      }
    } else {
      writeFileSync(artifactPath(name), text)
      console.log(`wrote contracts/${name}.json (runtime ${(artifacts[name].deployedBytecode.length - 2) / 2} bytes)`)
    }
  }
  console.log(`solc ${artifacts.TestUSDC.compiler.version} in ${Math.round(performance.now() - started)} ms`)
  if (stale) process.exit(1)
}

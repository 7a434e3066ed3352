// Debian's headless Chromium for the page tests (the pretest installs it), and a test wallet inside it: a viem
// private-key account behind the EIP-1193 interface a wallet extension injects as window.ethereum.
import { existsSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { LocalAccount } from 'viem'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
// As the machine's notes say: without the background-networking flags Chromium keeps dialling out at start.
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium not found at ${CHROMIUM}: run scripts/ensure-packages.sh (npm test does) or set CHROMIUM_PATH`)
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS })
}

/** What the test wallet was asked, in order (method names). */
export interface WalletLog {
  calls: string[]
}

/**
 * window.ethereum for `account`, answering as a wallet extension would: accounts, chain, chain switches it agrees
 * to, personal_sign and eth_signTypedData_v4, signed by the account in the test process.
 */
export async function injectWallet(page: Page, account: LocalAccount, chainId: number): Promise<WalletLog> {
  const log: WalletLog = { calls: [] }
  await page.exposeFunction('__trellisTestWallet', async (method: string, paramsJson: string) => {
    log.calls.push(method)
    const params = JSON.parse(paramsJson) as unknown[]
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return JSON.stringify([account.address])
      case 'eth_chainId':
        return JSON.stringify(`0x${chainId.toString(16)}`)
      case 'wallet_switchEthereumChain': {
        const wanted = Number.parseInt((params[0] as { chainId: string }).chainId, 16)
        if (wanted !== chainId) return JSON.stringify({ error: { code: 4902, message: 'Unrecognized chain' } })
        return JSON.stringify(null)
      }
      case 'personal_sign': {
        const [message] = params as [`0x${string}`]
        return JSON.stringify(await account.signMessage({ message: { raw: message } }))
      }
      case 'eth_signTypedData_v4': {
        const { domain, types, primaryType, message } = JSON.parse(params[1] as string)
        const { EIP712Domain: _, ...rest } = types
        return JSON.stringify(await account.signTypedData({ domain, types: rest, primaryType, message }))
      }
      default:
        return JSON.stringify({ error: { code: 4200, message: `unsupported method ${method}` } })
    }
  })
  await page.addInitScript(() => {
    const call = (window as unknown as { __trellisTestWallet: (m: string, p: string) => Promise<string> }).__trellisTestWallet
    ;(window as unknown as { ethereum: unknown }).ethereum = {
      isTrellisTestWallet: true,
      async request({ method, params }: { method: string; params?: unknown[] }) {
        const answer = JSON.parse(await call(method, JSON.stringify(params ?? [])))
        if (answer && typeof answer === 'object' && 'error' in answer)
          throw Object.assign(new Error(answer.error.message), { code: answer.error.code })
        return answer
      },
    }
  })
  return log
}

const AXE = Bun.file(require.resolve('axe-core/axe.min.js')).text()

/**
 * What is wrong with the page shown, as a person on a small screen or with a screen reader meets it: whether it scrolls
 * sideways, and axe-core's serious and critical violations (rule: the elements).
 */
export async function pageProblems(page: Page): Promise<{ sideways: boolean; violations: string[] }> {
  const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth])
  await page.evaluate(await AXE)
  const violations = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run(): Promise<{ violations: any[] }> } }).axe.run()
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n: { target: string[] }) => n.target.join(' ')).join(', ')}`)
  })
  return { sideways: scroll! > client!, violations }
}

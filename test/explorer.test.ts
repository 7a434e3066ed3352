// The API explorer at /v1/docs, as a person sees it: Debian's headless Chromium (installed by the pretest script)
// loads it from a running server with the network closed, every operation is listed, and every request body, the
// 402 answer and the error answers show their schemas.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { injectWallet, launchChromium } from '../dev/browser.ts'
import { call, newWallet } from '../dev/api.ts'
import { BASE_SEPOLIA_CHAIN_ID } from '../dev/chain.ts'
import { startTestServer, tempDir, type TestServer } from '../dev/server.ts'
import { TEST_POSTGRES } from '../dev/test-database.ts'

// The API explorer's page, whichever engine answers: run once, in the embedded pass.
describe.skipIf(Boolean(TEST_POSTGRES))("the API explorer's page, whichever engine answers", () => {
  let server: TestServer
  let browser: Browser
  beforeAll(async () => {
    server = await startTestServer({ TRELLIS_ADMIN_KEY: 'explorer-admin-key' }) // with the admin routes
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.dispose()
  })

  test('the explorer lists every operation and shows every request body, the 402 answer and the errors', async () => {
    const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; tags?: string[]; requestBody?: object }>>
    }
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } })
    const problems: string[] = []
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`))
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url)) problems.push(`left the server: ${request.url()}`)
    })
    await page.goto(`${server.url}/v1/docs`)
    await page.waitForSelector('.opblock', { timeout: 20_000 })

    const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops))
    expect(await page.locator('.opblock').count()).toBe(operations.length)

    const open = async (op: { operationId: string; tags?: string[] }) => {
      const block = page.locator(`#operations-${op.tags?.[0] ?? 'default'}-${op.operationId}`.replace(/ /g, '_'))
      await block.locator('.opblock-summary').click()
      await block.locator('.responses-wrapper').waitFor()
      return block
    }

    // Every body: the example shows the fields of its schema (an empty body renders as nothing at all).
    const withBodies = operations.filter((op) => op.requestBody)
    // nonce, feed create and update, entry create and update, wallet, access link, category create and update, webhook,
    // the four takedowns and reinstatements, the MCP message, a feed's pass on sale, a WebSub hub request
    expect(withBodies.length).toBe(17)
    for (const op of withBodies) {
      const block = await open(op)
      // A form-encoded body (the WebSub hub request) is shown as its fields, each named.
      if (Object.keys((op.requestBody as { content: object }).content)[0] === 'application/x-www-form-urlencoded') {
        const form = (await block.locator('.opblock-section-request-body').textContent()) ?? ''
        expect({ op: op.operationId, names: form.includes('hub.mode') && form.includes('hub.callback') }).toEqual({
          op: op.operationId,
          names: true,
        })
        continue
      }
      const example =
        (await block
          .locator('.opblock-section-request-body .body-param__example, .opblock-section-request-body pre')
          .first()
          .textContent()) ?? ''
      expect({ op: op.operationId, hasFields: /"\w+":/.test(example) }).toEqual({ op: op.operationId, hasFields: true })
    }

    // The paid entry's 402: the x402 body and the payment-required header.
    const entry = await open(doc.paths['/v1/feeds/{feed_id}/entries/{entry_id}']!.get!)
    const paymentRow = entry.locator('tr.response[data-code="402"]')
    await expect(paymentRow.textContent()).resolves.toContain('x402Version')
    await expect(paymentRow.textContent()).resolves.toContain('payment-required')
    await expect(entry.locator('tr.response[data-code="404"]').textContent()).resolves.toContain('ENTRY_NOT_FOUND')

    const shots = tempDir('trellis-explorer-')
    const shot = join(shots, 'explorer.png')
    await page.screenshot({ path: shot, fullPage: false })
    expect(statSync(shot).size).toBeGreaterThan(50_000)
    rmSync(shots, { recursive: true, force: true })
    expect(problems).toEqual([])
    await page.close()
  }, 90_000)

  test('with a browser wallet connected, "Try it out" signs the request: the feed it creates is the wallet’s', async () => {
    const account = newWallet()
    const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; tags?: string[] }>>
    }
    const create = doc.paths['/v1/feeds']!.post!
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } })
    const problems: string[] = []
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`)
    })
    const wallet = await injectWallet(page, account, BASE_SEPOLIA_CHAIN_ID)
    const docs = await page.goto(`${server.url}/v1/docs`)
    expect(docs!.headers()['content-security-policy']).toContain("script-src 'self'")
    await page.waitForSelector('.opblock', { timeout: 20_000 })
    await page.locator('#connect-wallet').click()
    await page.locator('#wallet-status', { hasText: 'Signing' }).waitFor()

    const block = page.locator(`#operations-${create.tags![0]}-${create.operationId}`.replace(/ /g, '_'))
    await block.locator('.opblock-summary').click()
    await block.locator('.try-out__btn').click()
    await block.locator('textarea.body-param__text').fill(JSON.stringify({ name: 'from the explorer', tags: [] }))
    await block.locator('.execute').click()
    const live = block.locator('.live-responses-table')
    await live.waitFor({ timeout: 20_000 })
    const status = live.locator('tbody tr.response td.response-col_status').first()
    expect((await status.textContent())?.trim()).toBe('201')
    expect(wallet.calls).toEqual(['eth_requestAccounts', 'personal_sign'])
    const listed = (await call(server.url, 'GET', `/v1/feeds?owner_wallet_address=${account.address}`)).body
    expect(listed.data.map((f: { name: string }) => f.name)).toEqual(['from the explorer'])
    expect(problems).toEqual([])
    await page.close()
  }, 90_000)
})

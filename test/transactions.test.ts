// Validation of the ledger endpoints; recorded purchases are exercised in payments.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { call, newWallet } from '../dev/api.ts'

// In process (app.handle): rules of the routes and the domain, not of the process or the socket.
let app: InProcessApp
beforeAll(async () => {
  app = await startInProcess()
})
afterAll(() => app.dispose())

describe('transactions: bad input', () => {
  test('by id: malformed → 400 INVALID_PARAMETER, unknown (with or without tx_) → 404 NOT_FOUND', async () => {
    for (const id of ['nope', 'tx_nope', 'tx_', '123']) {
      const reply = await call(app, 'GET', `/v1/transactions/${id}`)
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe('INVALID_PARAMETER')
    }
    for (const id of ['01900000-0000-7000-8000-000000000000', 'tx_01900000-0000-7000-8000-000000000000']) {
      const reply = await call(app, 'GET', `/v1/transactions/${id}`)
      expect(reply.status).toBe(404)
      expect(reply.body.code).toBe('NOT_FOUND')
    }
  })

  test('by hash: details say 0x-prefixed and 66 characters', async () => {
    for (const hash of ['0x1234', 'ab'.repeat(33), '0x' + 'zz'.repeat(32)]) {
      const reply = await call(app, 'GET', `/v1/transactions/hash/${hash}`)
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe('INVALID_PARAMETER')
      expect(reply.body.details).toContain('0x-prefixed')
      expect(reply.body.details).toContain('66')
    }
    const unknown = await call(app, 'GET', `/v1/transactions/hash/0x${'ab'.repeat(32)}`)
    expect(unknown.status).toBe(404)
    expect(unknown.body.code).toBe('NOT_FOUND')
  })

  test('list: empty ledger, bad filters, bad tokens', async () => {
    const empty = await call(app, 'GET', '/v1/transactions')
    expect(empty.status).toBe(200)
    expect(empty.body).toEqual({
      transactions: [],
      data: [],
      pagination: { page_size: 0, next_page_token: null, has_more: false, total_count: 0 },
    })
    for (const q of ['payer=nope', 'pay_to=0x12', 'entry_id=abc', 'page_size=101', 'page_size=0']) {
      const reply = await call(app, 'GET', `/v1/transactions?${q}`)
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe('INVALID_PARAMETER')
    }
    const token = await call(app, 'GET', '/v1/transactions?page_token=abc.def')
    expect(token.status).toBe(422)
    expect(token.body.code).toBe('INVALID_PAGE_TOKEN')
    expect((await call(app, 'GET', `/v1/transactions?payer=${newWallet().address.toLowerCase()}&page_size=100`)).status).toBe(200)
  })
})

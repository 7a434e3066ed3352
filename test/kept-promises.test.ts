// The budgeted keep of values by key (src/lib/kept-promises.ts), which the public feeds keep their rendered bodies in.
import { expect, test } from 'bun:test'
import { keptPromises } from '../src/lib/kept-promises.ts'

const weighText = (text: string) => text.length

test('a value being made is shared; once made it is read again without being made', async () => {
  const kept = keptPromises<string>(1000)
  let made = 0
  const make = async () => `body ${++made}`
  const [a, b] = await Promise.all([kept.get('k', make, weighText), kept.get('k', make, weighText)])
  expect([a, b, await kept.get('k', make, weighText), made]).toEqual(['body 1', 'body 1', 'body 1', 1])
})

test('a value that fails, or that is not to be kept, is made again next time', async () => {
  const kept = keptPromises<string | undefined>(1000)
  let made = 0
  await expect(
    kept.get(
      'k',
      () => Promise.reject(new Error(`try ${++made}`)),
      () => 1,
    ),
  ).rejects.toThrow('try 1')
  expect(
    await kept.get(
      'k',
      async () => `body ${++made}`,
      () => undefined,
    ),
  ).toBe('body 2')
  expect(
    await kept.get(
      'k',
      async () => `body ${++made}`,
      () => 1,
    ),
  ).toBe('body 3')
  expect(
    await kept.get(
      'k',
      async () => `body ${++made}`,
      () => 1,
    ),
  ).toBe('body 3')
})

test('past the budget the least recently read go first', async () => {
  const kept = keptPromises<string>(30) // each value weighs 10 characters and its one-character key
  const made: string[] = []
  const get = (key: string) => kept.get(key, async () => (made.push(key), key.repeat(10)), weighText)
  for (const key of ['a', 'b']) await get(key)
  await get('a') // a is read again: b is now the least recently read
  await get('c') // 33 characters: b goes
  await get('a')
  await get('b')
  expect(made).toEqual(['a', 'b', 'c', 'b'])
})

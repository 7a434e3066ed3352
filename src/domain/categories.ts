// Categories: seeded on first start; read by anyone.
import type { CategoryStore } from '../store/categories.ts'
import type { Records } from '../store/stores.ts'
import type { CategoryRecord } from '../models/records.ts'
import type { CreateCategory, UpdateCategory } from '../models/category.ts'
import { newId, isUuid } from '../lib/ids.ts'
import { nowSeconds } from '../lib/clock.ts'
import { fail } from './errors.ts'

export const SEED_CATEGORIES = ['Finance', 'Sports', 'Business', 'Tech', 'Politics', 'Crypto', 'Games']

export function categoryService(d: { records: Records }) {
  const categories = d.records.read.categories
  async function get(id: string): Promise<CategoryRecord> {
    if (!isUuid(id)) fail('INVALID_PARAMETER', 'invalid category id', 'category_id must be a UUID')
    return (await categories.byId(id.toLowerCase())) ?? fail('CATEGORY_NOT_FOUND', 'category not found')
  }
  return {
    async seedIfEmpty(): Promise<void> {
      await d.records.transact(async (tx) => {
        if ((await tx.categories.count()) > 0) return
        for (const name of SEED_CATEGORIES)
          await tx.categories.insert({ id: newId(), name, description: `${name} feeds`, icon_url: null, now: nowSeconds() })
      })
    },
    get,
    async create(input: CreateCategory): Promise<CategoryRecord> {
      const id = newId()
      const row = {
        id,
        name: input.name.trim(),
        description: input.description ?? null,
        icon_url: input.icon_url ?? null,
        now: nowSeconds(),
      }
      if (!(await d.records.transact((tx) => tx.categories.insert(row)))) fail('CATEGORY_CONFLICT', 'a category with this name exists')
      return (await categories.byId(id))!
    },
    async update(id: string, patch: UpdateCategory): Promise<CategoryRecord> {
      const category = await get(id)
      const changes = {
        ...(patch.name !== undefined ? { name: patch.name.trim() } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.icon_url !== undefined ? { icon_url: patch.icon_url } : {}),
        ...(patch.is_active !== undefined ? { is_active: patch.is_active } : {}),
      }
      if (!(await d.records.transact((tx) => tx.categories.update(category.id, changes, nowSeconds()))))
        fail('CATEGORY_CONFLICT', 'a category with this name exists')
      return (await categories.byId(category.id))!
    },
    list: (filter: Parameters<CategoryStore['list']>[0]) => categories.list(filter),
  }
}
export type CategoryService = ReturnType<typeof categoryService>

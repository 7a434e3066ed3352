// Categories: seeded on first start; read by anyone.
import type { CategoryRow, CategoryStore } from '../store/categories.ts'
import { newId, isUuid } from '../lib/ids.ts'
import { nowSeconds } from '../lib/clock.ts'
import { fail } from './errors.ts'

export const SEED_CATEGORIES = ['Finance', 'Sports', 'Business', 'Tech', 'Politics', 'Crypto', 'Games']

export function categoryService(d: { categories: CategoryStore }) {
  return {
    seedIfEmpty(): void {
      if (d.categories.count() > 0) return
      for (const name of SEED_CATEGORIES) {
        d.categories.insert({ id: newId(), name, description: `${name} feeds`, icon_url: null, now: nowSeconds() })
      }
    },
    get(id: string): CategoryRow {
      if (!isUuid(id)) fail('INVALID_PARAMETER', 'invalid category id', 'category_id must be a UUID')
      return d.categories.byId(id.toLowerCase()) ?? fail('CATEGORY_NOT_FOUND', 'category not found')
    },
    list: (filter: Parameters<CategoryStore['list']>[0]) => d.categories.list(filter),
  }
}
export type CategoryService = ReturnType<typeof categoryService>

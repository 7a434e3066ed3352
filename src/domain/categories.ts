// Categories: seeded on first start; read by anyone.
import type { CategoryStore } from '../store/categories.ts'
import type { CategoryRecord } from '../models/records.ts'
import type { CreateCategory, UpdateCategory } from '../models/category.ts'
import { newId, isUuid } from '../lib/ids.ts'
import { nowSeconds } from '../lib/clock.ts'
import { fail } from './errors.ts'

export const SEED_CATEGORIES = ['Finance', 'Sports', 'Business', 'Tech', 'Politics', 'Crypto', 'Games']

export function categoryService(d: { categories: CategoryStore }) {
  function get(id: string): CategoryRecord {
    if (!isUuid(id)) fail('INVALID_PARAMETER', 'invalid category id', 'category_id must be a UUID')
    return d.categories.byId(id.toLowerCase()) ?? fail('CATEGORY_NOT_FOUND', 'category not found')
  }
  return {
    seedIfEmpty(): void {
      if (d.categories.count() > 0) return
      for (const name of SEED_CATEGORIES) {
        d.categories.insert({ id: newId(), name, description: `${name} feeds`, icon_url: null, now: nowSeconds() })
      }
    },
    get,
    create(input: CreateCategory): CategoryRecord {
      const id = newId()
      if (!d.categories.insert({ id, name: input.name.trim(), description: input.description ?? null, icon_url: input.icon_url ?? null, now: nowSeconds() })) {
        fail('CATEGORY_CONFLICT', 'a category with this name exists')
      }
      return d.categories.byId(id)!
    },
    update(id: string, patch: UpdateCategory): CategoryRecord {
      const category = get(id)
      const changes = {
        ...(patch.name !== undefined ? { name: patch.name.trim() } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.icon_url !== undefined ? { icon_url: patch.icon_url } : {}),
        ...(patch.is_active !== undefined ? { is_active: patch.is_active } : {}),
      }
      if (!d.categories.update(category.id, changes, nowSeconds())) fail('CATEGORY_CONFLICT', 'a category with this name exists')
      return d.categories.byId(category.id)!
    },
    list: (filter: Parameters<CategoryStore['list']>[0]) => d.categories.list(filter),
  }
}
export type CategoryService = ReturnType<typeof categoryService>

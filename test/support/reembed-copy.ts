/** Begins a re-embedding of the tenant with the app's own embedder and copies every page into the new index. */
import { createReembedActivities, type ReembedPage } from '../../activities/reembed.activities.js';
import type { TestApp } from './app.js';

export async function beginAndCopy(app: TestApp, tenant: string, generation: string) {
  const acts = createReembedActivities({
    memories: app.services.memories,
    index: app.services.index,
    reembedder: app.services.reembedder,
    audit: app.services.audit,
  });
  const start = await acts.reembedBegin({ tenant, generation });
  for (let after: string | null = null; ;) {
    const page: ReembedPage = await acts.reembedCopyPage({ tenant, after, pageSize: 100 });
    if (page.done) break;
    after = page.last;
  }
  return { acts, start };
}

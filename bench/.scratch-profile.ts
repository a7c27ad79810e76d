import { SqliteReplyStore } from '../src/engine/reply-store.js';
import { createOpenAICompatibleJudge } from '../src/judges/openai/openai-judge.js';
import { RewardService } from '../src/server/reward-service.js';
import { createServerApp } from '../src/server/app.js';
import { startFakeJudge, binaryVerdict } from '../src/testing/fake-judge.js';
import { benchItem } from './server.js';
const fake = await startFakeJudge(() => ({ content: binaryVerdict(true) }));
const judge = createOpenAICompatibleJudge({ model: 'm', baseUrl: fake.baseUrl });
const store = new SqliteReplyStore(':memory:');
const service = new RewardService({ grading: { judge, store, concurrency: 64 } });
const app = createServerApp({ service });
const bodies = Array.from({ length: 256 }, (_, i) => JSON.stringify(benchItem(i)));
for (const body of bodies) await app.request('/v1/score', { method: 'POST', body });
console.log('warmed', fake.requests.length);
let t = performance.now();
const N = 2000;
for (let i = 0; i < N; i++) { const r = await app.request('/v1/score', { method: 'POST', body: bodies[i % 256] }); await r.text(); }
console.log('ms/request', (performance.now() - t) / N, 'calls', fake.requests.length);
await judge.close(); await fake.close();

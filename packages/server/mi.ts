// In-process PUT /api/agents/{did}: server CPU per update (Fastify inject, SQLite file).
import { startRegistry, register, type Registered } from '@agent-registry/testkit/in-process';
const registry = await startRegistry();
const editors: Registered[] = [];
for (let i = 0; i < 200; i++) editors.push(await register(registry));
let n = 0;
const one = async () => {
  const e = editors[n % editors.length] as Registered;
  const body = n % 4 === 0 ? { description: `Translates documents; revision ${n}`, tags: ['bench', `rev-${n % 16}`] } : { description: `Translates documents; revision ${n}` };
  n++;
  const r = await registry.app.inject({ method: 'PUT', url: `/api/agents/${encodeURIComponent(e.did)}`, payload: body, headers: { authorization: `Bearer ${e.token}` } });
  if (r.statusCode !== 200) throw new Error(r.body);
};
const run = async (count: number, conc: number) => {
  let left = count;
  await Promise.all(Array.from({ length: conc }, async () => { while (left-- > 0) await one(); }));
};
await run(Number(process.env.WARM ?? 3000), 10);
const U = Number(process.argv[2] ?? 20000);
const c0 = process.cpuUsage(); const t0 = performance.now();
await run(U, 10);
const c = process.cpuUsage(c0); const t = performance.now() - t0;
console.log(`${process.env.LABEL}: ${((c.user + c.system) / 1000 / U).toFixed(4)} ms CPU/update (user ${(c.user/1000/U).toFixed(4)}, sys ${(c.system/1000/U).toFixed(4)}), wall ${(t / U).toFixed(4)} ms/update`);
await registry.close();

import OpenAI from 'openai';

// The training API is plain JSON over the same base URL, key and project.
const client = new OpenAI({
  baseURL: `${process.env.TOLLGATE_URL}/v1`,
  apiKey: process.env.TOLLGATE_KEY,
  project: 'team-a/prod',
});

const model = await client.post('/preview/models', {
  body: { project: 'agents', name: 'email-agent', base_model: 'Qwen/Qwen2.5-14B-Instruct' },
});
const checkpoints = await client.get(`/preview/models/${model.id}/checkpoints`, { query: { limit: 10 } });
console.log(model.id, checkpoints.data.length);

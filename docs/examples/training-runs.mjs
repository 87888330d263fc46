import OpenAI from 'openai';

// The newer API (/v1/training/*): the operator adds its routes (docs/routes.md).
const client = new OpenAI({
  baseURL: `${process.env.TOLLGATE_URL}/v1`,
  apiKey: process.env.TOLLGATE_KEY,
  project: 'team-a/prod',
});

const capabilities = await client.get('/training/capabilities');
const run = await client.post('/training/runs', {
  body: { base_model: capabilities.base_models[0], name: 'email-agent' },
});
console.log(JSON.stringify(run));

import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: `${process.env.TOLLGATE_URL}/v1`,
  apiKey: process.env.TOLLGATE_KEY,
  project: 'team-a/prod', // sent as OpenAI-Project on every request
});

const reply = await client.chat.completions.create({
  model: 'OpenPipe/Qwen3-14B-Instruct',
  messages: [{ role: 'user', content: 'How is training going?' }],
});
console.log(reply.choices[0].message.content);

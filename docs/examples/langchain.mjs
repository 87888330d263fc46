import { ChatOpenAI } from '@langchain/openai';

// ChatOpenAI has no project option: send the header yourself.
const model = new ChatOpenAI({
  model: 'OpenPipe/Qwen3-14B-Instruct',
  apiKey: process.env.TOLLGATE_KEY,
  configuration: {
    baseURL: `${process.env.TOLLGATE_URL}/v1`,
    defaultHeaders: { 'OpenAI-Project': 'team-a/prod' },
  },
});

const reply = await model.invoke('How is training going?');
console.log(reply.content);

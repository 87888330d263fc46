import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';

const tollgate = createOpenAI({
  baseURL: `${process.env.TOLLGATE_URL}/v1`,
  apiKey: process.env.TOLLGATE_KEY,
  project: 'team-a/prod', // or headers: { 'OpenAI-Project': 'team-a/prod' }
});

// .chat(): the Chat Completions API (the default model factory calls the Responses API)
const { text } = await generateText({
  model: tollgate.chat('OpenPipe/Qwen3-14B-Instruct'),
  prompt: 'How is training going?',
});
console.log(text);

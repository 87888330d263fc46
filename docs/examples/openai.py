import os
from openai import OpenAI

client = OpenAI(
    base_url=os.environ["TOLLGATE_URL"] + "/v1",
    api_key=os.environ["TOLLGATE_KEY"],
    project="team-a/prod",  # or OPENAI_PROJECT_ID=team-a/prod in the environment
)

reply = client.chat.completions.create(
    model="OpenPipe/Qwen3-14B-Instruct",
    messages=[{"role": "user", "content": "How is training going?"}],
)
print(reply.choices[0].message.content)

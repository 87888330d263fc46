import os
from openai import OpenAI

# The training API over the openai client's generic calls: same base URL, key and project.
client = OpenAI(
    base_url=os.environ["TOLLGATE_URL"] + "/v1",
    api_key=os.environ["TOLLGATE_KEY"],
    project="team-a/prod",
)

model = client.post(
    "/preview/models",
    body={"project": "agents", "name": "email-agent", "base_model": "Qwen/Qwen2.5-14B-Instruct"},
    cast_to=dict,
)
run = client.post("/training/runs", body={"base_model": "Qwen/Qwen2.5-14B-Instruct"}, cast_to=dict)
print(model["id"], run["id"])

import os
from langchain_openai import ChatOpenAI

# No project option: send the header (or set OPENAI_PROJECT_ID; OPENAI_PROJECT is ignored).
model = ChatOpenAI(
    model="OpenPipe/Qwen3-14B-Instruct",
    base_url=os.environ["TOLLGATE_URL"] + "/v1",
    api_key=os.environ["TOLLGATE_KEY"],
    default_headers={"OpenAI-Project": "team-a/prod"},
)

print(model.invoke("How is training going?").content)

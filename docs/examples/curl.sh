#!/bin/sh
set -eu
# Chat completion, metered to team-a/prod
curl -sS --fail-with-body "$TOLLGATE_URL/v1/chat/completions" \
  -H "Authorization: Bearer $TOLLGATE_KEY" \
  -H "OpenAI-Project: team-a/prod" \
  -H "Content-Type: application/json" \
  -d '{"model":"OpenPipe/Qwen3-14B-Instruct","messages":[{"role":"user","content":"hi"}]}'
echo
# A training model (the /v1/preview API): the same key and header
curl -sS --fail-with-body "$TOLLGATE_URL/v1/preview/models" \
  -H "Authorization: Bearer $TOLLGATE_KEY" \
  -H "OpenAI-Project: team-a/prod" \
  -H "Content-Type: application/json" \
  -d '{"project":"agents","name":"email-agent","base_model":"Qwen/Qwen2.5-14B-Instruct"}'
echo

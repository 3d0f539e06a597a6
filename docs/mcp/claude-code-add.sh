claude mcp add --scope project helm -e HELM_HOME=/home/you/.helm -e HELM_IDENTITY=claude-1 -e HELM_ROLE=coder -e HELM_METHOD=claude-code -- /home/you/go/bin/helm mcp

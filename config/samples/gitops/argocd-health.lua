-- Argo CD custom health check for SvcCluster (resource.customizations.health.svc.io_SvcCluster).
-- kstatus semantics: current generation + Ready=True is Healthy; Stalled=True is Degraded.
local hs = { status = "Progressing", message = "waiting for the operator" }
if obj.status ~= nil and obj.status.observedGeneration == obj.metadata.generation and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Stalled" and c.status == "True" then
      return { status = "Degraded", message = c.reason .. ": " .. c.message }
    end
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" and c.status == "True" then
      return { status = "Healthy", message = c.message }
    end
    if c.type == "Ready" then
      hs.message = c.reason .. ": " .. c.message
    end
  end
end
return hs

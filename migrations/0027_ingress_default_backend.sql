-- An Ingress's default backend, `{service, port}` as the agent sends it (the
-- wire's v1.1 `default_backend`): where a request no rule matches goes. The
-- graph's routes_to follows it beside the rule paths. Null when the Ingress
-- has none, or when its agent predates the field.
alter table k8s_ingresses add column default_backend jsonb;

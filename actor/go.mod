module kubehz.dev/agent/actor

go 1.26.0

require kubehz.dev/agent/shared v0.0.0

replace kubehz.dev/agent/shared => ../shared

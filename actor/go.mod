module kubehz.dev/agent/actor

go 1.26.0

replace kubehz.dev/agent/shared => ../shared

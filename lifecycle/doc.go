// Package lifecycle moves payments from pending to their outcome: the
// state machine (Engine), the clock each merchant sees (Clocks), the one
// scheduler that fires what falls due on those clocks (Scheduler), the
// test cards, and scripted scenarios from files and built-ins.
package lifecycle

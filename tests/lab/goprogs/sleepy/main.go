// Command sleepy never ends by itself: the lab test stops it with SIGTERM (capture's
// --timeout), which must still dump the records, through the runtime's dieFromSignal.
package main

import "time"

func main() {
	for i := 0; i < 4; i++ {
		go func() { time.Sleep(time.Hour) }()
	}
	time.Sleep(time.Hour)
}

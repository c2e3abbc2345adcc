// Command scheduler is the Lambda function the schedule runs every minute.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/tick"
)

func main() { lambdafn.EventMain(tick.Function) }

// Command fold-queue-commands is the Lambda function that folds clients' merge-queue commands into their queues as the table's stream announces them.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queues"
)

func main() { lambdafn.EventMain(queues.FoldCommands) }

package kafkabpl

// addAdminFunctions adds the admin functions to the BPL table.
func (lib *Library) addAdminFunctions(m map[string]Func) {}

// Tests only: see TestCamera.swift.
TestCamera.run()
